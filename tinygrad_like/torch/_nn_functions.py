"""The torch.* forms of torch.nn.functional's ops (`torch.selu(x)`, `torch.dropout(x, p, train)`, ...),
with the argument order of PyTorch's own operators (which is not always F's: torch.dropout's third
argument is `train`), each one call of F's function: one implementation per op.
"""
from __future__ import annotations

from tinygrad_like.dialect import activations as A
from tinygrad_like.dialect import ctc, distances, layers, losses, margin_losses, norms, rearrange
from tinygrad_like.dialect.functional import binary_cross_entropy_with_logits as _bce_logits
from tinygrad_like.dialect.inplace import drawing_from

REDUCTIONS = ("none", "mean", "sum")   # the operators' `reduction` is an int, PyTorch's enum: 0, 1, 2


def _reduction(reduction) -> str:
    return REDUCTIONS[reduction] if isinstance(reduction, int) else reduction


def dropout(input, p: float, train: bool):
    """torch.dropout(input, p, train): F.dropout."""
    return input.dropout(p, training=train)


def dropout_(input, p: float, train: bool):
    """torch.dropout_(input, p, train): F.dropout written into input."""
    return input._update("dropout_", lambda t: t.dropout(p, training=train))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    """torch.rrelu: F.rrelu (the slopes from `generator` when given)."""
    with drawing_from(generator):
        return A.rrelu(input, lower, upper, training)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    with drawing_from(generator):
        return A.rrelu_(input, lower, upper, training)


def alpha_dropout(input, p: float, train: bool):
    return layers.alpha_dropout(input, p, train)


def alpha_dropout_(input, p: float, train: bool):
    return input._update("alpha_dropout_", lambda t: layers.alpha_dropout(t, p, train))


def feature_dropout(input, p: float, train: bool):
    """torch.feature_dropout: whole channels of (N, C, ...) dropped (F.dropout2d's rule for any rank)."""
    return layers._feature_dropout(input, p, train, "feature_dropout")


def feature_dropout_(input, p: float, train: bool):
    return input._update("feature_dropout_", lambda t: layers._feature_dropout(t, p, train, "feature_dropout_"))


def feature_alpha_dropout(input, p: float, train: bool):
    return layers.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p: float, train: bool):
    return input._update("feature_alpha_dropout_", lambda t: layers.feature_alpha_dropout(t, p, train))


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats: bool, momentum: float,
                  eps: float, cudnn_enabled: bool = True):
    """torch.instance_norm: F.instance_norm with the operator's argument order (weight and bias first)."""
    return norms.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, cudnn_enable: bool = True):
    return norms.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5, cudnn_enabled: bool = True):
    return norms.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True):
    """torch.batch_norm: F.batch_norm with the operator's argument order (weight and bias first)."""
    return norms.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return norms.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False, sparse: bool = False):
    """torch.embedding(weight, indices, ...): the table first, and padding_idx = -1 meaning none."""
    return layers.embedding(indices, weight, None if padding_idx < 0 else padding_idx, None, 2.0,
                            scale_grad_by_freq, sparse)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return _bce_logits(input, target, weight, _reduction(reduction), pos_weight)


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction=1):
    return margin_losses.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction=1):
    return margin_losses.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction=1):
    return margin_losses.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction=1):
    return margin_losses.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                             reduction=_reduction(reduction))


def kl_div(input, target, reduction=1, *, log_target: bool = False):
    return losses.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float, reduction):
    return losses.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    return distances.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    return distances.pairwise_distance(x1, x2, p, eps, keepdim)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction=1,
             zero_infinity: bool = False):
    return ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


NN_FUNCTIONS = {
    "selu": A.selu, "selu_": A.selu_, "celu": A.celu, "celu_": A.celu_, "threshold": A.threshold,
    "threshold_": A.threshold_, "prelu": A.prelu, "hardshrink": A.hardshrink, "relu_": A.relu_,
    "rrelu": rrelu, "rrelu_": rrelu_, "dropout": dropout, "dropout_": dropout_, "alpha_dropout": alpha_dropout,
    "alpha_dropout_": alpha_dropout_, "layer_norm": layer_norm, "group_norm": group_norm, "batch_norm": batch_norm,
    "rms_norm": rms_norm, "embedding": embedding, "embedding_renorm_": layers.embedding_renorm_,
    "bilinear": layers.bilinear, "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
    "cosine_embedding_loss": cosine_embedding_loss, "hinge_embedding_loss": hinge_embedding_loss,
    "margin_ranking_loss": margin_ranking_loss, "triplet_margin_loss": triplet_margin_loss, "kl_div": kl_div,
    "poisson_nll_loss": poisson_nll_loss, "cosine_similarity": cosine_similarity,
    "pairwise_distance": pairwise_distance, "pdist": distances.pdist, "ctc_loss": ctc_loss,
    "feature_dropout": feature_dropout, "feature_dropout_": feature_dropout_,
    "feature_alpha_dropout": feature_alpha_dropout, "feature_alpha_dropout_": feature_alpha_dropout_,
    "instance_norm": instance_norm, "pixel_shuffle": rearrange.pixel_shuffle,
    "pixel_unshuffle": rearrange.pixel_unshuffle, "channel_shuffle": rearrange.channel_shuffle,
}
