"""The library's one random number generator, so that `Tensor.manual_seed(s)` makes every random op
(randn, rand, dropout, sampling) reproducible, and a checkpoint can save and restore its state."""
from __future__ import annotations

import contextlib

import numpy as np

_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


def rng() -> np.random.Generator:
    return _rng


def get_state() -> dict:
    """The generator's state as plain JSON-able data (ints and strings)."""
    return _rng.bit_generator.state


def set_state(state: dict) -> None:
    bit_generator = getattr(np.random, state["bit_generator"])()
    bit_generator.state = state
    global _rng
    _rng = np.random.Generator(bit_generator)


@contextlib.contextmanager
def drawing_from(generator: np.random.Generator):
    """Inside `with drawing_from(g):` every random op draws from the numpy Generator `g` instead of the
    library's own, which is left untouched: PyTorch's `generator=` argument (tinygrad_like.torch)."""
    global _rng
    prev, _rng = _rng, generator
    try:
        yield
    finally:
        _rng = prev
