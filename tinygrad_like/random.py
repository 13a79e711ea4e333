"""The library's one random stream, so that a seed makes every random op (randn, rand, uniform, randint,
dropout, sampling, init) reproducible, and a checkpoint can save and restore where the stream stands.

The stream is of one of two kinds, chosen by the seed call made last:
- `Tensor.manual_seed(s)` (this module's `manual_seed`): numpy's Generator, the engine's own stream, which
  the engine's models, demos and published figures use;
- `tinygrad_like.torch.manual_seed(s)` (`use(TorchGenerator(s))`): PyTorch's CPU streams reproduced
  (pytorch_streams/generator.py), so a PyTorch program run on the facade draws PyTorch's numbers.
Every draw goes through the functions below (normal, uniform, integers, permutation, keep_mask,
multinomial_torch), which ask the current stream for the numbers; a numpy stream gives exactly the numbers
the engine drew before PyTorch's streams existed.
"""
from __future__ import annotations

import contextlib

import numpy as np

from tinygrad_like.dispatch import kernel
from tinygrad_like.pytorch_streams.generator import TorchGenerator

_rng = np.random.default_rng()
_torch: TorchGenerator | None = None     # set: the library draws PyTorch's numbers from it


def manual_seed(seed: int) -> None:
    """The engine's own stream (numpy's), seeded."""
    use(np.random.default_rng(seed))


def use(generator) -> None:
    """Draw from `generator` from now on: a numpy Generator or a TorchGenerator."""
    global _rng, _torch
    if isinstance(generator, TorchGenerator):
        _torch = generator
    elif isinstance(generator, np.random.Generator):
        _rng, _torch = generator, None
    else:
        raise TypeError(f"random.use: expected a numpy Generator or a TorchGenerator, got {type(generator).__name__}")


def current():
    """The stream drawn from now: the TorchGenerator in use, or the numpy Generator."""
    return _torch if _torch is not None else _rng


def rng() -> np.random.Generator:
    """The numpy Generator (the engine's stream), whichever kind is in use: for code that draws with numpy's
    own methods (the demos' batches, the models' sampling)."""
    return _rng


def get_state() -> dict:
    """The stream's state as plain JSON-able data (ints and strings)."""
    if _torch is not None:
        return {"bit_generator": "TorchGenerator", "bytes": _torch.get_state().tobytes().hex()}
    return _rng.bit_generator.state


def set_state(state: dict) -> None:
    if state["bit_generator"] == "TorchGenerator":
        use(TorchGenerator().set_state(np.frombuffer(bytes.fromhex(state["bytes"]), dtype=np.uint8)))
        return
    bit_generator = getattr(np.random, state["bit_generator"])()
    bit_generator.state = state
    use(np.random.Generator(bit_generator))


@contextlib.contextmanager
def drawing_from(generator):
    """Inside `with drawing_from(g):` every random op draws from `g` (a numpy Generator or a TorchGenerator)
    instead of the library's stream, which is left untouched: PyTorch's `generator=` argument."""
    global _rng, _torch
    prev = _rng, _torch
    use(generator)
    try:
        yield
    finally:
        _rng, _torch = prev


# ---------------------------------------------------------------- the draws
def normal(shape, dtype=np.float32, mean: float = 0.0, std: float = 1.0, contiguous: bool = True) -> np.ndarray:
    """N(mean, std²) samples of `shape` in `dtype` (contiguous=False: PyTorch's path for a strided output)."""
    if _torch is not None:
        return _torch.normal(tuple(shape), _float(dtype), mean, std, contiguous).astype(dtype, copy=False)
    return _rng.normal(mean, std, shape).astype(dtype)


def uniform(shape, dtype=np.float32, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """Samples uniform in [low, high) of `shape` in `dtype`."""
    if _torch is not None:
        return _torch.uniform(tuple(shape), _float(dtype), low, high).astype(dtype, copy=False)
    return _rng.uniform(low, high, shape).astype(dtype)


def integers(low: int, high: int, shape, dtype=np.int64) -> np.ndarray:
    """Integers uniform in [low, high) of `shape`."""
    if _torch is not None:
        return _torch.integers(low, high, tuple(shape), dtype)
    return _rng.integers(low, high, shape, dtype=dtype)


def permutation(n: int) -> np.ndarray:
    """0..n-1 in a random order (int64)."""
    if _torch is not None:
        return _torch.permutation(n)
    return _rng.permutation(n)


def bernoulli(p, shape) -> np.ndarray:
    """True with probability p (a float, or an array of `shape` giving each entry's probability)."""
    if _torch is not None:
        return _torch.bernoulli(p, tuple(shape))
    return _rng.random(shape) < p


def exponential(shape, dtype=np.float32, rate: float = 1.0) -> np.ndarray:
    """Samples of the exponential distribution of the given rate (mean 1/rate)."""
    if _torch is not None:
        return _torch.exponential(tuple(shape), dtype, rate)
    return _rng.exponential(1 / rate, shape).astype(dtype)


def random_bits(shape, dtype) -> np.ndarray:
    """Tensor.random_() without bounds: integers in [0, 2^mantissa bits] for floats, [0, max] for integers."""
    if _torch is not None:
        return _torch.random(tuple(shape), dtype)
    dtype = np.dtype(dtype)
    high = 2 if dtype == np.bool_ else 2 ** (np.finfo(dtype).nmant + 1) + 1 if dtype.kind == "f" \
        else int(np.iinfo(dtype).max) + 1
    return _rng.integers(0, high, shape).astype(dtype)


def dropout_noise(shape, p: float, dtype) -> np.ndarray:
    """What dropout multiplies by: 0 with probability p, else 1/(1 − p), in `dtype`. PyTorch's kernel divides
    in the tensor's precision (1/(1 − p) rounded from float32 operands), the engine's in float64 (then rounds
    once to dtype: the numbers (keep / (1 − p)).astype(dtype) gave, made in dtype from the start)."""
    dtype = np.dtype(dtype)
    if _torch is not None:                              # the mask and the noise in one pass on the fast path
        return _torch.bernoulli_scaled(1 - p, tuple(shape), dtype.type(1) / dtype.type(1 - p))
    keep = _rng.random(shape) >= p
    return kernel("scaled", scaled)(keep, dtype.type(1 / (1 - p)))


def scaled(keep: np.ndarray, scale) -> np.ndarray:
    """scale where keep (boolean) is True, else 0, in scale's dtype: keep as numbers, times scale. The fast
    path registers a twin that does both in one pass, in pieces on the thread pool (fast/elementwise.py)."""
    noise = keep.astype(scale.dtype)
    noise *= scale
    return noise


def numpy_stream(op: str) -> np.random.Generator:
    """The numpy Generator, for a draw whose PyTorch numbers are not reproduced (cauchy_, log_normal_, geometric_,
    binomial, poisson): while the stream is PyTorch's, an error saying so, rather than numbers PyTorch would not
    give."""
    if _torch is not None:
        raise NotImplementedError(f"{op}: PyTorch's numbers for this draw are not reproduced (pytorch_streams/ has "
                                  "normal, uniform, integers, permutations, bernoulli, exponential, multinomial and "
                                  "dropout), and the stream in use is PyTorch's (torch.manual_seed or a "
                                  "torch.Generator); draw it from the engine's numpy stream: Tensor.manual_seed(s), "
                                  "or generator=numpy.random.default_rng(s)")
    return _rng


def drawing_pytorchs() -> bool:
    """True while the stream is PyTorch's (a TorchGenerator): for a draw whose two kinds differ in more than
    the numbers (multinomial's algorithm)."""
    return _torch is not None


def into(array: np.ndarray, draw) -> np.ndarray:
    """Values for `array`'s entries, from draw(shape) -> an array of that shape. PyTorch fills a strided
    tensor (a transposed view, say) in the order its entries lie in memory, so from PyTorch's stream the
    draws come in that order (the axes sorted by stride) and are put back in place; numpy's stream draws
    in index order, as the engine always has."""
    if _torch is None or array.flags.c_contiguous:
        return draw(array.shape)
    order = sorted(range(array.ndim), key=lambda axis: -abs(array.strides[axis]))   # stable: ties keep their order
    values = draw(tuple(array.shape[axis] for axis in order))
    return np.transpose(values, np.argsort(order))


def _float(dtype) -> np.dtype:
    """The precision PyTorch draws in for `dtype`: float64 for float64, float32 for anything else."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)
