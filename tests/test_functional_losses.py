"""tinygrad_like.functional.cross_entropy and nll_loss with PyTorch's names, arguments and layout
((N, C, d1) inputs, ignore_index=-100), against values PyTorch 2.13 printed for the same inputs."""
import contextlib

import numpy as np
import pytest

import tinygrad_like.functional as F
from tinygrad_like import Tensor, composed, gradcheck

X = np.array([[[0.5, 1.5], [-1.0, 0.0], [2.0, -0.5]],
              [[-2.0, 1.0], [3.0, 1.0], [0.25, 1.0]]])           # (N=2, C=3, d1=2)
T = np.array([[2, -100], [1, 0]])                               # (N, d1), one position ignored
PYTORCH = {  # F.cross_entropy(x, t, **kw), printed by PyTorch 2.13
    (("reduction", "mean"),): 0.4694014303,
    (("reduction", "sum"),): 1.4082042909,
    (("reduction", "none"),): [[0.2413112967, 0.0], [0.0682807056, 1.0986122887]],
    (("label_smoothing", 0.3),): 0.8777347636,
    (("label_smoothing", 0.3), ("reduction", "none")): [[0.6913112967, 0.0], [0.8432807056, 1.0986122887]],
}
GRAD_SMOOTHED = [[[0.0250967974, 0.0], [-0.0202958089, 0.0], [-0.0048009885, 0.0]],
                 [[-0.0312355897, -0.1555555556], [0.0446660861, 0.0777777778], [-0.0134304963, 0.0777777778]]]


@pytest.mark.parametrize("path", ["fused", "composed"])
@pytest.mark.parametrize("kw", list(PYTORCH), ids=[str(dict(k)) for k in PYTORCH])
def test_cross_entropy_matches_pytorch(kw, path):
    with composed() if path == "composed" else contextlib.nullcontext():
        loss = F.cross_entropy(Tensor(X), Tensor(T), **dict(kw))
    np.testing.assert_allclose(loss.numpy(), PYTORCH[kw], atol=1e-9)


@pytest.mark.parametrize("path", ["fused", "composed"])
def test_cross_entropy_gradient_with_label_smoothing_matches_pytorch(path):
    x = Tensor(X, requires_grad=True)
    with composed() if path == "composed" else contextlib.nullcontext():
        F.cross_entropy(x, T, label_smoothing=0.3).backward()
        assert gradcheck(lambda a: F.cross_entropy(a, T, label_smoothing=0.3, reduction="none"),
                         Tensor(X, requires_grad=True))
    np.testing.assert_allclose(x.grad.numpy(), GRAD_SMOOTHED, atol=1e-9)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_matches_pytorch_and_gradchecks(reduction):
    """nll_loss(log_softmax(x, 1), t) is cross_entropy(x, t): PyTorch printed the same numbers for both."""
    logp = Tensor(X).log_softmax(1)
    loss = F.nll_loss(logp, T, reduction=reduction)
    np.testing.assert_allclose(loss.numpy(), PYTORCH[(("reduction", reduction),)], atol=1e-9)
    assert gradcheck(lambda a: F.nll_loss(a, T, reduction=reduction), Tensor(X, requires_grad=True))


def test_losses_refuse_bad_arguments():
    with pytest.raises(ValueError, match="reduction must be"):
        F.cross_entropy(Tensor(X), T, reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(Tensor(X), T, label_smoothing=1.5)
    with pytest.raises(IndexError, match="target 3 is outside"):
        F.nll_loss(Tensor(X), np.array([[3, 0], [0, 0]]))
    with pytest.raises(ValueError, match="need targets of shape"):
        F.nll_loss(Tensor(X), np.array([0, 1]))
