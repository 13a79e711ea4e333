"""PyTorch's CPU random streams, reproduced: the same seed gives the same numbers as PyTorch.

Why: a learner following a recorded lecture (`g = torch.Generator().manual_seed(2147483647)`, then
`torch.randn((27, 27), generator=g)`, `torch.multinomial(...)`) should see the lecture's numbers on this
engine, so that a different number means a real difference, not a different random stream.

How PyTorch draws on the CPU (read in its source, checked against it number by number in
tests/test_torch_generator.py):
- the engine is the 32-bit Mersenne Twister MT19937, seeded from the seed's low 32 bits with the
  reference initialisation (not numpy's seeding); numpy's `MT19937` bit generator is the same twister,
  so we set its 624 words ourselves and let it run. A 64-bit draw is two 32-bit words, the first high;
- uniform floats: float32 from the low 24 bits of one word, float64 from the low 53 bits of a 64-bit draw,
  times 2^-24 or 2^-53, then `x·(to − from) + from` in the tensor's precision;
- normals: a tensor of 16 or more numbers is filled with uniforms, then each block of 16 becomes 16 normals
  by Box–Muller (the first 8 give u1, the last 8 u2: r·cos θ and r·sin θ); a length not divisible by 16
  redraws 16 fresh uniforms for its last 16 numbers. float32 evaluates log and sin/cos with Cephes'
  float32 polynomials (cephes_float32.py), float64 with the C library's. Fewer than 16 numbers draw one
  pair of 53-bit uniforms per two normals, keeping the second normal for the next draw (a cache that
  manual_seed clears);
- integers in [low, high): one word modulo the range (two words when the range is 2^28 or more);
- randperm: Fisher–Yates from the front, swapping i with i + (word mod (n − i));
- multinomial, bernoulli and exponential: see their methods.

Shapes: every draw takes a shape tuple and returns a numpy array of that shape, C order (the order in
which PyTorch fills a contiguous tensor).
"""
from __future__ import annotations

import math
import secrets

import numpy as np

from tinygrad_like.dispatch import kernel
from tinygrad_like.pytorch_streams import cephes_float32
from tinygrad_like.pytorch_streams.fma import fma32, fma64

DEFAULT_SEED = 67280421310721      # a new torch.Generator()'s seed
_STATE_WORDS = 624
_F32_UNIT, _F64_UNIT = np.float32(2.0 ** -24), 2.0 ** -53
_TWO_PI_F32 = np.float32(2.0 * math.pi)
_STATE_BYTES = 5056                # sizeof PyTorch's CPUGeneratorImplState


def _seeded_words(seed: int) -> np.ndarray:
    """MT19937's reference initialisation from a 32-bit seed: w[0] = seed, w[i] = 1812433253·(w[i−1] ^
    (w[i−1] >> 30)) + i mod 2^32 (numpy seeds its own MT19937 differently, hence this)."""
    words = [seed & 0xFFFFFFFF]
    for i in range(1, _STATE_WORDS):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(words, dtype=np.uint32)


def _libm(fn):
    """The C library's `fn` (Python's math module calls it) on every element of a float64 array: numpy's own
    float64 log and log1p differ from it in the last bit for some inputs, PyTorch calls the C library."""
    ufunc = np.frompyfunc(fn, 1, 1)
    return lambda x: ufunc(np.asarray(x, dtype=np.float64)).astype(np.float64)


_log, _log1p, _sin, _cos = _libm(math.log), _libm(math.log1p), _libm(math.sin), _libm(math.cos)


class TorchGenerator:
    """A random stream that draws PyTorch's CPU numbers: `TorchGenerator(2147483647).normal((27, 27))`
    equals `torch.randn((27, 27), generator=torch.Generator().manual_seed(2147483647))`."""

    def __init__(self, seed: int = DEFAULT_SEED):
        self._bits = np.random.MT19937()
        self.manual_seed(seed)

    # ---------------------------------------------------------------- seed and state
    def manual_seed(self, seed: int) -> TorchGenerator:
        """Restart the stream from `seed` (any int; stored as an unsigned 64-bit number, as PyTorch does)."""
        self._seed = int(seed) % 2 ** 64
        self._set_words(_seeded_words(self._seed), 0)
        self._next_normal = None       # the cached second normal of the small-tensor path
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        self.manual_seed(secrets.randbits(64))
        return self._seed

    def _set_words(self, words: np.ndarray, position: int) -> None:
        """position: how many of the 624 words were handed out (0 after seeding, then twisting first)."""
        self._fresh = position == 0          # PyTorch's state says 0 here, and 624 once a block is used up
        position = _STATE_WORDS if position == 0 else position           # numpy: "twist before the next word"
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": words.astype(np.uint32), "pos": position}}

    def get_state(self) -> np.ndarray:
        """The state as PyTorch's torch.get_rng_state() bytes (uint8, 5056 of them: seed, position, the 624
        words, the cached normal), so a state round-trips between this engine and PyTorch."""
        state = self._bits.state["state"]
        position = 0 if self._fresh else int(state["pos"])
        left = 1 if self._fresh else _STATE_WORDS + 1 - position          # words left before the next twist, + 1
        parts = [np.uint64(self._seed), np.int32(left), np.int32(1), np.uint64(position),
                 state["key"].astype(np.uint64),
                 np.float64(0), np.float64(self._next_normal or 0.0), np.float64(0),   # normal_x, _y, _rho
                 np.int32(self._next_normal is not None)]
        raw = b"".join(np.asarray(p).tobytes() for p in parts)
        out = np.zeros(_STATE_BYTES, dtype=np.uint8)                       # the rest: float cache, padding
        out[:len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        return out

    def set_state(self, state) -> TorchGenerator:
        """Restore a state from get_state() (ours or PyTorch's bytes)."""
        state = np.asarray(state)
        if state.dtype != np.uint8 or state.shape != (_STATE_BYTES,):
            raise ValueError(f"set_state: expected {_STATE_BYTES} bytes (uint8) as get_state() gives, "
                             f"got dtype {state.dtype} and shape {state.shape}")
        raw = state.tobytes()
        seed = int(np.frombuffer(raw[0:8], dtype=np.uint64)[0])
        position = int(np.frombuffer(raw[16:24], dtype=np.uint64)[0])
        words = np.frombuffer(raw[24:24 + 8 * _STATE_WORDS], dtype=np.uint64)
        if not 0 <= position <= _STATE_WORDS or (words >> np.uint64(32)).any():
            raise ValueError("set_state: these bytes are not a Mersenne Twister state (position "
                             f"{position}, or words wider than 32 bits)")
        tail = 24 + 8 * _STATE_WORDS
        valid = int(np.frombuffer(raw[tail + 24:tail + 28], dtype=np.int32)[0])
        self._seed = seed
        self._set_words(words.astype(np.uint32), position)
        self._next_normal = float(np.frombuffer(raw[tail + 8:tail + 16], dtype=np.float64)[0]) if valid else None
        return self

    # ---------------------------------------------------------------- raw words
    def words(self, n: int) -> np.ndarray:
        """The next n 32-bit outputs of the twister (uint64 array holding 32-bit values)."""
        if not n:
            return np.zeros(0, dtype=np.uint64)
        self._fresh = False
        return self._bits.random_raw(n)

    def words64(self, n: int) -> np.ndarray:
        """The next n 64-bit draws: each is two words, the first one the high half."""
        w = self.words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    # ---------------------------------------------------------------- uniform
    def _unit(self, n: int, dtype) -> np.ndarray:
        """n uniforms in [0, 1): float32 from 24 bits of one word, float64 from 53 bits of two."""
        if np.dtype(dtype) == np.float64:
            return self._bits53(n).astype(np.float64) * _F64_UNIT
        return (self.words(n) & np.uint64(2 ** 24 - 1)).astype(np.float32) * _F32_UNIT

    def _bits53(self, n: int) -> np.ndarray:
        """The 53-bit integers k (uint64) of the next n float64 uniforms k·2^-53."""
        self._fresh = self._fresh and not n
        return bits53(self._bits, n)

    def uniform(self, shape, dtype=np.float32, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """torch.rand / Tensor.uniform_(low, high): x·(high − low) + low, one fused multiply-add in the
        tensor's precision (float32 or float64; others draw float32 and round); a value that rounds to
        `high` becomes `low`."""
        dtype = np.dtype(dtype)
        work, fma = (np.float64, fma64) if dtype == np.float64 else (np.float32, fma32)
        lo, hi = work(low), work(high)
        x = fma(self._unit(math.prod(shape), work), hi - lo, lo).astype(dtype)
        x[x == dtype.type(high)] = dtype.type(low)
        return x.reshape(shape)

    # ---------------------------------------------------------------- normal
    def normal(self, shape, dtype=np.float32, mean: float = 0.0, std: float = 1.0, contiguous: bool = True):
        """torch.randn / Tensor.normal_(mean, std): 16 or more numbers of a contiguous tensor take the
        blocked path, anything else the one-at-a-time path (see the module's docstring)."""
        n, dtype = math.prod(shape), np.dtype(dtype)
        if n >= 16 and contiguous:
            work = np.float64 if dtype == np.float64 else np.float32
            out = self._normal_blocks(n, work, mean, std)
        else:
            out = self._normal_pairs(n, mean, std)
        return out.astype(dtype).reshape(shape)

    def _normal_blocks(self, n: int, work, mean: float, std: float) -> np.ndarray:
        u = self._unit(n, work)
        whole = n // 16 * 16
        out = np.empty(n, dtype=work)
        out[:whole] = _box_muller_16(u[:whole].reshape(-1, 16), work, mean, std).reshape(-1)
        if n % 16:                                                  # the last 16 again, from fresh uniforms
            out[n - 16:] = _box_muller_16(self._unit(16, work).reshape(1, 16), work, mean, std).reshape(-1)
        return out

    def _normal_pairs(self, n: int, mean: float, std: float) -> np.ndarray:
        """One normal at a time in float64: the cached one if there is one, else u1, u2 (53 bits each),
        r = √(−2·log1p(−u2)), θ = 2π·u1, return r·cos θ and cache r·sin θ."""
        out = []
        for _ in range(n):
            if self._next_normal is not None:
                z, self._next_normal = self._next_normal, None
            else:
                u1, u2 = (float(self._unit(1, np.float64)[0]) for _ in range(2))
                r = math.sqrt(-2.0 * math.log1p(-u2))
                theta = 2.0 * math.pi * u1
                self._next_normal = r * math.sin(theta)
                z = r * math.cos(theta)
            out.append(z)
        out = np.array(out, dtype=np.float64)
        return _fma64(out, std, mean)


    # ---------------------------------------------------------------- integers
    def integers(self, low: int, high: int, shape, dtype=np.int64) -> np.ndarray:
        """torch.randint(low, high, shape) / Tensor.random_(low, high): (word mod (high − low)) + low, one
        word per number, or one 64-bit draw per number when the range is 2^28 or more."""
        span, n = int(high) - int(low), math.prod(shape)
        if span <= 0:
            raise ValueError(f"randint: low ({low}) must be smaller than high ({high})")
        raw = self.words64(n) if span >= 2 ** 28 else self.words(n)
        values = (raw % np.uint64(span)).view(np.int64)          # as astype(int64): the same 64 bits, no copy
        if low:
            values += np.int64(low)
        return values.astype(dtype, copy=False).reshape(shape)

    def random(self, shape, dtype=np.int64) -> np.ndarray:
        """Tensor.random_() without bounds: integers in [0, 2^digits] for floats (24 or 53 digits, so every
        value is exact) and [0, max] for integers: a 64-bit draw for int64 and float64, a word otherwise."""
        dtype, n = np.dtype(dtype), math.prod(shape)
        if dtype == np.bool_:
            return (self.words(n) & np.uint64(1)).astype(bool).reshape(shape)
        wide = dtype in (np.dtype(np.int64), np.dtype(np.float64))
        raw = self.words64(n) if wide else self.words(n)
        if dtype.kind == "f":
            modulus = 2 ** (np.finfo(dtype).nmant + 1) + 1                 # 2^digits + 1
        else:
            modulus = int(np.iinfo(dtype).max) + 1
        return (raw % np.uint64(modulus)).astype(dtype).reshape(shape)

    def permutation(self, n: int) -> np.ndarray:
        """torch.randperm(n): 0..n-1, then for i = 0..n-2 swap entries i and i + (word mod (n − i))."""
        n = int(n)
        if 20 * n >= 2 ** 32 - 1:                                   # PyTorch's test: n < (2^32 - 1) / 20
            raise NotImplementedError(f"randperm: n={n} takes PyTorch's other algorithm for very large n, "
                                      "which this engine does not reproduce")
        order = list(range(n))
        steps = self.words(max(n - 1, 0)).tolist()
        for i, word in enumerate(steps):
            j = i + word % (n - i)
            order[i], order[j] = order[j], order[i]
        return np.array(order, dtype=np.int64)

    # ---------------------------------------------------------------- bernoulli, exponential, multinomial
    def bernoulli(self, p, shape=None) -> np.ndarray:
        """Tensor.bernoulli_(p) / torch.bernoulli(probs) as bool: u < p, with u from 53 bits for a float p
        or a float64 probs array, and from 24 bits for float32 probs. `shape` is needed for a float p."""
        if isinstance(p, np.ndarray):
            u = self._unit(p.size, np.float64 if p.dtype == np.float64 else np.float32).reshape(p.shape)
            return u < p
        p, n = float(p), math.prod(shape)
        if not 0 <= p <= 1:                                         # NaN, or every u on one side of p
            return self._unit(n, np.float64).reshape(shape) < p
        self._fresh = self._fresh and not n
        return kernel("keep_below", keep_below)(self._bits, bernoulli_threshold(p), n).reshape(shape)

    def bernoulli_scaled(self, p: float, shape, scale) -> np.ndarray:
        """bernoulli(p, shape) as numbers in scale's dtype (a numpy scalar): `scale` where True, else 0.
        Dropout's noise (random.dropout_noise: p the chance to keep, scale 1/p); the fast path makes it in
        one compiled pass from the twister's words (fast/streams.py)."""
        p, n = float(p), math.prod(shape)
        if not 0 <= p <= 1:
            return _scaled(self.bernoulli(p, shape), scale)
        self._fresh = self._fresh and not n
        draw = kernel("keep_below_scaled", keep_below_scaled)
        return draw(self._bits, bernoulli_threshold(p), n, scale).reshape(shape)

    def exponential(self, shape, dtype=np.float32, rate: float = 1.0) -> np.ndarray:
        """Tensor.exponential_(rate): −log1p(−u)/rate in float64 (u from 53 bits), rounded to dtype."""
        u = self._unit(math.prod(shape), np.float64)
        return ((-1.0 / rate) * _log1p(-u)).astype(dtype).reshape(shape)

    def multinomial(self, weights: np.ndarray, num_samples: int, replacement: bool = False) -> np.ndarray:
        """torch.multinomial on (rows, n) non-negative weights (float32 or float64) -> int64 (rows, num_samples).
        Without replacement, or for one sample: q = exponential draws in the weights' dtype and shape, then the
        num_samples largest weights/q per row, largest first. With replacement: per row the running sum of the
        weights divided by the total (in their dtype), then for each sample one 53-bit uniform and the first
        category whose cumulative share is >= it."""
        rows, n = weights.shape
        if not replacement or num_samples == 1:
            keys = weights / self.exponential(weights.shape, weights.dtype)
            if num_samples == 1:
                return np.argmax(keys, axis=-1)[:, None].astype(np.int64)
            return np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples].astype(np.int64)
        out = np.empty((rows, num_samples), dtype=np.int64)
        for r in range(rows):
            cdf = np.cumsum(weights[r])
            cdf = cdf / cdf[-1]
            cdf[-1] = 1
            u = self._unit(num_samples, np.float64)
            out[r] = np.searchsorted(cdf.astype(np.float64), u, side="left")
        return out

def bits53(bits: np.random.MT19937, n: int) -> np.ndarray:
    """The 53-bit integers k (uint64) of the twister's next n float64 uniforms k·2^-53: the low 53 bits
    of a 64-bit draw, that is the first word's low 21 bits above the second word."""
    w = bits.random_raw(2 * n)
    k = w[0::2] & np.uint64(2 ** 21 - 1)
    k <<= np.uint64(32)
    k |= w[1::2]
    return k


def keep_below(bits: np.random.MT19937, threshold: int, n: int) -> np.ndarray:
    """k < threshold (bool, n) for the 53-bit integers k of the twister's next n float64 uniforms: bernoulli's
    draw. The fast path registers a compiled twin (tinygrad_like/fast/streams.py), equal bit for bit."""
    return bits53(bits, n) < threshold


def keep_below_scaled(bits: np.random.MT19937, threshold: int, n: int, scale) -> np.ndarray:
    """keep_below's mask as numbers in scale's dtype: `scale` where kept, else 0 (dropout's noise). The fast
    path registers a compiled twin that writes these numbers straight from the twister's words."""
    return _scaled(keep_below(bits, threshold, n), scale)


def _scaled(keep: np.ndarray, scale) -> np.ndarray:
    noise = keep.astype(np.asarray(scale).dtype)
    noise *= scale
    return noise


def bernoulli_threshold(p: float) -> int:
    """T = ⌈p·2^53⌉ for 0 ≤ p ≤ 1: a uniform u = k·2^-53 is below p exactly when the integer k is below T
    (p·2^53 is exact, and k < x ⟺ k < ⌈x⌉ for an integer k), so bernoulli compares the 53-bit integers
    themselves and skips making the floats."""
    return math.ceil(p * 2.0 ** 53)


def _box_muller_16(u: np.ndarray, work, mean: float, std: float) -> np.ndarray:
    """(blocks, 16) uniforms -> (blocks, 16) normals: columns 0-7 give u1 = 1 − u, columns 8-15 give θ = 2π·u;
    out[:, :8] = r·cos θ·std + mean, out[:, 8:] = r·sin θ·std + mean, with r = √(−2·log u1)."""
    u1, u2 = 1 - u[:, :8], u[:, 8:]
    if work == np.float32:
        radius = np.sqrt(np.float32(-2) * cephes_float32.log(u1))
        sin, cos = cephes_float32.sincos(_TWO_PI_F32 * u2)
        first, second = radius * cos, radius * sin
        return np.concatenate([_fma32(first, std, mean), _fma32(second, std, mean)], axis=1)
    radius = np.sqrt(-2 * _log(u1))
    theta = 2.0 * math.pi * u2
    first, second = radius * _cos(theta), radius * _sin(theta)
    return np.concatenate([_fma64(first, std, mean), _fma64(second, std, mean)], axis=1)


def _fma32(x: np.ndarray, std: float, mean: float) -> np.ndarray:
    """x·std + mean rounded once to float32 (PyTorch's fused multiply-add)."""
    return x if std == 1 and mean == 0 else fma32(x, np.float32(std), np.float32(mean))


def _fma64(x: np.ndarray, std: float, mean: float) -> np.ndarray:
    """x·std + mean rounded once in float64 (PyTorch's fused multiply-add)."""
    return x if std == 1 and mean == 0 else fma64(x, std, mean)
