"""`Dropout`: during training, zero each entry with probability p (and scale the rest by 1/(1-p))."""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor


class Dropout(Module):
    """x -> x with entries zeroed at random while `self.training`; the identity after `model.eval()`.

    The kept entries are scaled by 1/(1-p) so the expected value is unchanged and nothing needs
    rescaling at inference. `dtype` is accepted for a uniform layer signature; there are no parameters.
    """

    def __init__(self, p: float = 0.0, dtype="float32"):
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return x.dropout(self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
