"""`BatchNorm1d` (and `BatchNorm2d`/`3d` for feature maps): standardise each feature over the batch, with
running statistics for inference.

Training: each feature c is standardised with the mean and the (biased) variance of the batch,
    y = (x − μ_B) / √(σ²_B + eps) · weight + bias,
and the running statistics move towards the batch's: r ← (1 − momentum)·r + momentum·stat, with the
unbiased variance (n/(n−1)·σ²_B) for running_var, as PyTorch does. Evaluation (`model.eval()`) uses
the running statistics, so one example gives the same answer alone as in any batch.
(Ioffe & Szegedy 2015, https://arxiv.org/abs/1502.03167.)
"""
from __future__ import annotations

import numpy as np

from nn.module import Module
from tinygrad_like import Tensor


def per_feature_state(module: Module, num_features: int, eps: float, momentum: float | None, affine: bool,
                      track_running_stats: bool, dtype) -> None:
    """What BatchNorm and InstanceNorm hold per feature C, under PyTorch's names: weight (C,) at ones and
    bias (C,) at zeros when affine; the buffers running_mean (C,) at zeros, running_var (C,) at ones and
    num_batches_tracked () when track_running_stats; and the settings themselves."""
    module.num_features, module.eps, module.momentum = num_features, eps, momentum
    module.affine, module.track_running_stats = affine, track_running_stats
    module.weight = Tensor.ones(num_features, dtype=dtype, requires_grad=True) if affine else None
    module.bias = Tensor.zeros(num_features, dtype=dtype, requires_grad=True) if affine else None
    if track_running_stats:
        module.register_buffer("running_mean", Tensor.zeros(num_features, dtype=dtype))
        module.register_buffer("running_var", Tensor.ones(num_features, dtype=dtype))
        module.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))


class BatchNorm1d(Module):
    """x (N, C) or (N, C, L) -> same shape, normalised per feature C over N (and L).

    weight (C,) starts at ones, bias (C,) at zeros (affine=False drops both). Buffers running_mean (C,),
    running_var (C,) and num_batches_tracked () are in the state_dict under PyTorch's names.
    momentum=None averages every batch seen so far equally.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype="float32"):
        per_feature_state(self, num_features, eps, momentum, affine, track_running_stats, dtype)

    ranks = (2, 3)                          # the input's number of dimensions: (N, C) or (N, C, L)
    expected = "(N, {c}) or (N, {c}, L)"

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.ranks or x.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: input of shape {x.shape} must be "
                             + self.expected.format(c=self.num_features))
        axes = (0, *range(2, x.ndim))                                  # every dimension but the features
        per_feature = (-1,) + (1,) * (x.ndim - 2)                      # (C, 1, ...): broadcasts over N and positions
        if self.training or not self.track_running_stats:
            n = x.numel() // self.num_features
            if self.training and n < 2:
                raise ValueError(f"BatchNorm1d: training needs more than 1 value per feature, got input {x.shape} "
                                 "(use a batch of 2 or more, or call model.eval())")
            mean = x.mean(axes, keepdim=True)                          # (1, C) or (1, C, 1)
            centred = x - mean
            var = (centred * centred).mean(axes, keepdim=True)         # biased: divides by n
            if self.training and self.track_running_stats:
                self._update_running(mean._data.reshape(-1), var._data.reshape(-1) * (n / (n - 1)))
        else:
            mean, var = self.running_mean.reshape(per_feature), self.running_var.reshape(per_feature)
            centred = x - mean
        y = centred / (var + self.eps).sqrt()
        if self.affine:
            y = y * self.weight.reshape(per_feature) + self.bias.reshape(per_feature)
        return y

    def _update_running(self, mean: np.ndarray, unbiased_var: np.ndarray) -> None:
        """r ← (1 − m)·r + m·stat in place, outside the graph (m = 1/batches seen when momentum is None)."""
        self.num_batches_tracked._data[...] += 1
        m = 1.0 / float(self.num_batches_tracked._data) if self.momentum is None else float(self.momentum)
        for running, stat in ((self.running_mean._data, mean), (self.running_var._data, unbiased_var)):
            running *= 1 - m
            running += m * stat.astype(running.dtype)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm2d(BatchNorm1d):
    """BatchNorm1d over feature maps (N, C, H, W): each channel standardised over N and the positions."""

    ranks, expected = (4,), "(N, {c}, H, W)"


class BatchNorm3d(BatchNorm1d):
    """BatchNorm1d over volumes (N, C, D, H, W)."""

    ranks, expected = (5,), "(N, {c}, D, H, W)"
