"""The library's one random number generator, so that `Tensor.manual_seed(s)` makes every random op
(randn, rand, dropout, sampling) reproducible, and a checkpoint can save and restore its state."""
from __future__ import annotations

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
