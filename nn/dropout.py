"""`Dropout`: during training, zero each entry with probability p (and scale the rest by 1/(1-p));
`AlphaDropout`, its form for SELU networks, which keeps the mean and variance instead; `Dropout1d/2d/3d`
and `FeatureAlphaDropout`, the same by whole channels of feature maps (N, C, ...)."""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


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


class AlphaDropout(Module):
    """While training, entries set to SELU's floor with probability p, then all scaled and shifted so a
    standardised input keeps mean 0 and variance 1 (F.alpha_dropout); the identity after `eval()`."""

    def __init__(self, p: float = 0.5):
        if not 0 <= p <= 1:
            raise ValueError(f"AlphaDropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.alpha_dropout(x, self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Dropout1d(Module):
    """While training, each channel of (N, C, L) or (C, L) zeroed with probability p, the rest scaled by 1/(1 − p)."""

    spatial = 1

    def __init__(self, p: float = 0.5):
        if not 0 <= p <= 1:
            raise ValueError(f"{type(self).__name__}: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, f"dropout{self.spatial}d")(x, self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Dropout2d(Dropout1d):
    """Channel dropout of (N, C, H, W) or (C, H, W)."""

    spatial = 2


class Dropout3d(Dropout1d):
    """Channel dropout of (N, C, D, H, W) or (C, D, H, W)."""

    spatial = 3


class FeatureAlphaDropout(AlphaDropout):
    """AlphaDropout by whole channels of (N, C, ...)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.feature_alpha_dropout(x, self.p, training=self.training)
